// SPDX-License-Identifier: GPL-2.0-only
/*
 * The learned profile as a whole: the stages in order (folding,
 * generalisation, the sections), then the text parsed and compiled as the
 * agent would load it, with what fails said at its top (docs/learn.md).
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "bpfwarden.h"
#include "internal.h"
#include "learn_names.h"

static int fres_cmp(const void *a, const void *b)
{
	const struct bw_fres *x = a, *y = b;

	return bw_learn_path_cmp(x->o->path, y->o->path);
}

/*
 * Parse and compile the text as the agent would; what fails goes into `msgs`
 * as comment lines (none when it loads cleanly), with line numbers as they
 * will be once those lines and the two that introduce them are above it.
 */
static int self_check(const struct bw_wctx *w, const char *text, size_t len, FILE *msgs)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;
	struct bw_compiled c;
	char *fname = NULL, err[512] = "";
	const char *m = NULL;
	size_t shown, flen, i;
	int ret, cret = 0, off, line = 0;

	if (w->incdir ? asprintf(&fname, "%s/.bw-learn-check", w->incdir) < 0
		      : !(fname = strdup(".bw-learn-check")))
		return -ENOMEM;
	ret = bw_profile_parse_string(fname, text, len, w->libdir, &p, &d);
	if (ret == -ENOMEM)
		goto out;
	if (ret == 0) {
		cret = bw_compile(p, &c, err, sizeof(err));
		if (cret == -ENOMEM) {
			ret = cret;
			goto out;
		}
		if (!cret)
			bw_compiled_free(&c);
	}
	if (cret) {
		/* "NAME:LINE: message": the name is ours, not the reader's. */
		flen = strlen(fname);
		m = *err ? err : strerror(-cret);
		if (!strncmp(m, fname, flen) && m[flen] == ':') {
			line = atoi(m + flen + 1);
			m = strchr(m + flen + 1, ':');
			m = m ? m + 1 + (m[1] == ' ') : err;
		}
	}
	shown = d.n < 5 ? d.n : 5;
	off = 2 + (int)shown + (d.n > shown) + (cret != 0);
	if (!shown && !cret)
		off = 0;
	for (i = 0; i < shown; i++) {
		fprintf(msgs, "#   line %d: %s: ", d.v[i].line + off,
			d.v[i].severity == BW_SEV_ERROR ? "error" : "warning");
		bw_put_comment(msgs, d.v[i].msg);
		fputc('\n', msgs);
	}
	if (d.n > shown)
		fprintf(msgs, "#   and %zu more\n", d.n - shown);
	if (cret) {
		fputs("#   ", msgs);
		if (line)
			fprintf(msgs, "line %d: ", line + off);
		bw_put_comment(msgs, m);
		fputc('\n', msgs);
	}
	ret = 0;
out:
	bw_profile_free(p);
	bw_diags_free(&d);
	free(fname);
	return ret;
}

static int lobj_ptr_cmp(const void *a, const void *b)
{
	return bw_learn_path_cmp((*(const struct bw_lobj *const *)a)->path,
				 (*(const struct bw_lobj *const *)b)->path);
}

/* Every learned file, sorted by path: what a subtree rule would put under it. */
static int list_files(struct bw_wctx *w)
{
	w->files = calloc(w->s->n + 1, sizeof(*w->files));
	if (!w->files)
		return -ENOMEM;
	for (size_t i = 0; i < w->s->n; i++)
		if (w->s->v[i].cat == BW_CAT_FILE)
			w->files[w->nfiles++] = &w->s->v[i];
	qsort(w->files, w->nfiles, sizeof(*w->files), lobj_ptr_cmp);
	return 0;
}

static void wctx_free(struct bw_wctx *w)
{
	bw_base_free(w);
	bw_fold_free(w);
	bw_cands_free(w);
	bw_refusals_free(w);
	free(w->files);
	free(w->fr);
	free(w->st);
}

/*
 * The rules of the text that allow more than was seen, as "  RULE\n    why\n":
 * a subtree, name prefix, library directory or port range rule with the
 * writer's comment above it (kept rules have a "# kept from" header, or nothing). The text is the
 * one source: the list says what the profile says.
 */
static void list_widenings(FILE *out, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *prev = NULL;
	size_t prevlen = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		bool rule = (n > 11 && !memcmp(p, "allow file ", 11)) ||
			    (n > 15 && !memcmp(p, "allow exec lib ", 15));
		bool wide = rule && ((n >= 3 && !memcmp(p + n - 3, "/**", 3)) ||
				     (n >= 4 && !memcmp(p + n - 4, "/**\"", 4)) ||
				     p[n - 1] == '*' || (n >= 2 && !memcmp(p + n - 2, "*\"", 2)));
		/* A port range: the writer makes one only for a listener of the workload's own. */
		const char *colon =
		    n > 18 && !memcmp(p, "allow net connect ", 18) ? memrchr(p, ':', n) : NULL;

		if (colon && memchr(colon, '-', (size_t)(p + n - colon)))
			wide = true;

		if (wide && prev &&
		    ((prevlen > 7 && !memcmp(prev, "# seen ", 7)) ||
		     (prevlen > 21 && !memcmp(prev, "# a library directory", 21)))) {
			const char *why = memmem(prev, prevlen, "; ", 2);
			size_t wlen = why ? prevlen - (size_t)(why + 2 - prev) : prevlen - 2;

			fprintf(out, "  %.*s\n    %.*s\n", (int)n, p, (int)wlen,
				why ? why + 2 : prev + 2);
		}
		prev = p;
		prevlen = n;
		p = nl ? nl + 1 : end;
	}
}

int bw_learn_write_profile(const struct bw_learn_set *s, const struct bw_learn_opts *opts,
			   FILE *out)
{
	static const struct bw_learn_opts defaults;
	struct bw_wctx w = {0};
	const char *name;
	char *body = NULL, *warn = NULL, *incdir = NULL;
	size_t blen = 0, wlen = 0, i;
	FILE *f = NULL, *wf = NULL;
	int ret;

	if (!s || !out)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	name = opts->name			      ? opts->name
	       : opts->nbases && opts->bases[0]->name ? opts->bases[0]->name
						      : "learned";
	if (!bw_learn_profile_name_ok(name))
		return -EINVAL;
	/* An include name is one string on one line. */
	for (i = 0; opts->abstractions && opts->abstractions[i]; i++) {
		const char *a = opts->abstractions[i];

		if (!*a)
			return -EINVAL;
		for (; *a; a++)
			if (bw_learn_is_control((unsigned char)*a))
				return -EINVAL;
	}

	w.s = s;
	w.libdir = opts->libdir;
	w.incdir = opts->libdir;
	w.bases = opts->bases;
	w.nbases = opts->bases ? opts->nbases : 0;
	if (w.nbases && w.bases[0]->path) {
		/* A base's relative include is found beside it, as when it was checked. */
		incdir = strdup(w.bases[0]->path);
		if (!incdir)
			return -ENOMEM;
		w.incdir = dirname(incdir);
	}
	w.fs = opts->fs;
	w.why = opts->why;
	w.why_len = opts->why ? opts->why_len : 0;
	w.min_children = opts->min_children ? opts->min_children : BW_LEARN_MIN_CHILDREN;
	w.flags = opts->flags;
	w.st = calloc(s->n + 1, sizeof(*w.st));
	w.fr = calloc(s->n + 1, sizeof(*w.fr));
	ret = -ENOMEM;
	if (!w.st || !w.fr)
		goto out;
	ret = bw_base_build(&w);
	if (!ret)
		ret = bw_fold_all(&w, opts->abstractions);
	if (!ret)
		ret = list_files(&w);
	if (ret)
		goto out;

	/* Files left to write, sorted by path. */
	for (i = 0; i < s->n; i++) {
		const struct bw_lobj *o = &s->v[i];
		struct bw_fres *r;

		if (o->cat != BW_CAT_FILE || !(w.st[i].need & ~w.st[i].allowed))
			continue;
		r = &w.fr[w.nfr++];
		r->o = o;
		r->st = &w.st[i];
		r->bits = w.st[i].need & ~w.st[i].allowed;
		r->pinned = (r->bits & w.st[i].denied) || o->path[0] != '/';
		r->cand = -1;
	}
	qsort(w.fr, w.nfr, sizeof(*w.fr), fres_cmp);
	ret = bw_generalise(&w);
	if (ret)
		goto out;

	ret = -ENOMEM;
	f = open_memstream(&body, &blen);
	if (!f)
		goto out;
	fprintf(f,
		"# Learned by bpfwarden from %llu accesses to %zu objects. Review every rule\n"
		"# before enforcing it: each allows something the workload did while learned.\n",
		s->events, s->n);
	if (!(w.flags & BW_LEARN_NO_FANOUT))
		fprintf(
		    f,
		    "# Generalised: a directory with %u or more files of one access is DIR/**.\n",
		    w.min_children);
	if (!(w.flags & BW_LEARN_NO_VOLATILE))
		fputs("# Generalised: a per-run name (a PID, a time, tmpXXXXXX, hex) read or\n"
		      "# written is PARENT/**, so that the next run's names are allowed too.\n",
		      f);
	fputs("# Never /**, no subtree rule on a system directory, no w subtree in /usr, /etc,\n"
	      "# /bin, /sbin, /lib, /lib64, /boot, /proc, /sys, /dev, and none on, in or\n"
	      "# above a directory of secrets (keys, credentials): see docs/learn.md.\n",
	      f);
	if (w.nbases)
		fputs("# Started from what the profiles below say: their settings, includes and\n"
		      "# rules are kept; the rules after them are what was used beyond them.\n",
		      f);
	ret = bw_base_put_header(f, &w, name);
	if (ret)
		goto out;
	if (w.nfolds || w.base_len)
		fputc('\n', f);
	bw_base_put_includes(f, &w);
	for (i = 0; i < w.nfolds; i++) {
		const struct bw_fold *fo = &w.folds[i];

		fputs("# ", f);
		bw_put_comment(f, fo->name);
		if (!fo->loaded) {
			fputs(": not included: ", f);
			bw_put_comment(f, fo->why);
			fputc('\n', f);
		} else if (!fo->allows) {
			fputs(": not included, it allows none of the learned accesses\n", f);
		} else if (fo->allows < bw_fold_min(fo->name)) {
			fprintf(f,
				": not included, it allows only %zu of the learned accesses "
				"(fewer than %u: touched in passing, not what it is for)\n",
				fo->allows, bw_fold_min(fo->name));
		} else {
			fprintf(f, " allows %zu of the learned accesses\ninclude ", fo->allows);
			fputc('"', f);
			for (const char *c = fo->name; *c; c++) {
				if (*c == '"' || *c == '\\')
					fputc('\\', f);
				fputc(*c, f);
			}
			fputs("\"\n", f);
		}
	}
	ret = bw_base_put_rules(f, &w);
	if (!ret) {
		fputs("\n# files\n", f);
		ret = bw_write_files(f, &w);
	}
	if (!ret) {
		fputs("\n# programs\n", f);
		ret = bw_write_execs(f, &w);
	}
	if (!ret) {
		fputs("\n# network\n", f);
		ret = bw_write_net(f, &w);
	}
	if (!ret)
		ret = bw_write_view(f, &w);
	if (fclose(f)) {
		f = NULL;
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	f = NULL;
	if (ret)
		goto out;

	ret = -ENOMEM;
	wf = open_memstream(&warn, &wlen);
	if (!wf)
		goto out;
	ret = self_check(&w, body, blen, wf);
	if (fclose(wf) && !ret)
		ret = -ENOMEM;
	if (ret)
		goto out;
	if (wlen)
		fprintf(out,
			"# WARNING: this profile does not load as written (a kernel limit?);\n"
			"# trim or generalise it by hand. The check said:\n%s",
			warn);
	fwrite(body, 1, blen, out);
	ret = ferror(out) || fflush(out) ? -EIO : 0;
	if (!ret && opts->widenings)
		list_widenings(opts->widenings, body, blen);
out:
	if (f)
		fclose(f);
	free(body);
	free(warn);
	wctx_free(&w);
	free(incdir);
	return ret;
}
