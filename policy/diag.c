// SPDX-License-Identifier: GPL-2.0-only
/* Diagnostics: recording, limits, printing, and the FILE:LINE of a rule. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

static int push(struct bw_diags *d, enum bw_severity sev, const char *file, int line, int col,
		char *msg)
{
	struct bw_diag *v;
	char *f;

	if (!msg)
		return -ENOMEM;
	f = strdup(file ? file : "");
	v = realloc(d->v, (d->n + 1) * sizeof(*v));
	if (!f || !v) {
		free(f);
		free(msg);
		if (v)
			d->v = v;
		return -ENOMEM;
	}
	d->v = v;
	v[d->n].severity = sev;
	v[d->n].file = f;
	v[d->n].line = line;
	v[d->n].col = col;
	v[d->n].msg = msg;
	d->n++;
	if (sev == BW_SEV_ERROR)
		d->nerrors++;
	return 0;
}

int bw_diag_add(struct bw_diags *d, enum bw_severity sev, const char *file, int line, int col,
		const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int err;

	if (sev == BW_SEV_ERROR) {
		if (d->nerrors > BW_DIAG_MAX_ERRORS) {
			d->nerrors++;
			return 1;
		}
		if (d->nerrors == BW_DIAG_MAX_ERRORS) {
			err = push(d, sev, file, line, col,
				   strdup("too many errors; giving up on this profile"));
			return err ? err : 1;
		}
	} else {
		/* Every error up to the limit (and the one saying so) is kept. */
		size_t kept_errors =
		    d->nerrors <= BW_DIAG_MAX_ERRORS ? d->nerrors : BW_DIAG_MAX_ERRORS + 1;
		size_t warnings = d->n - kept_errors;

		if (warnings > BW_DIAG_MAX_WARNINGS)
			return 0;
		if (warnings == BW_DIAG_MAX_WARNINGS)
			return push(d, sev, file, line, col,
				    strdup("too many warnings; the rest are not shown"));
	}

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	return push(d, sev, file, line, col, msg);
}

const char *bw_quote(char *buf, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = len > BW_QUOTE_MAX ? BW_QUOTE_MAX : len;
	char *w = buf;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			*w++ = (char)c;
		} else if (c == '\\') {
			*w++ = '\\';
			*w++ = '\\';
		} else {
			*w++ = '\\';
			*w++ = 'x';
			*w++ = hex[c >> 4];
			*w++ = hex[c & 0xf];
		}
	}
	if (n < len) {
		memcpy(w, "...", 3);
		w += 3;
	}
	*w = '\0';
	return buf;
}

void bw_diags_free(struct bw_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
	d->nerrors = 0;
}

void bw_diags_print(FILE *f, const struct bw_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct bw_diag *g = &d->v[i];
		fprintf(f, "%s:%d:%d: %s: %s\n", g->file, g->line, g->col,
			g->severity == BW_SEV_ERROR ? "error" : "warning", g->msg);
	}
}

int bw_origin_format(const struct bw_origin *o, char *buf, size_t len)
{
	int n;

	if (!o || !buf || !len)
		return -EINVAL;
	if (!o->file || o->line <= 0)
		n = snprintf(buf, len, "default");
	else
		n = snprintf(buf, len, "%s:%d", o->file, o->line);
	if (n < 0)
		return -EINVAL;
	return (size_t)n < len ? n : -ENOSPC;
}
