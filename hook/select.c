// SPDX-License-Identifier: GPL-2.0-only
/* Selection and failure policy (select.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"

/* A glob against a value; an absent value matches no glob. */
static bool glob_ok(const char *glob, const char *v)
{
	return !glob || (v && !fnmatch(glob, v, 0));
}

static bool matches(const struct bw_selector *m, const struct bw_k8s_id *id, const char *cgroup)
{
	return glob_ok(m->namespace_, id->namespace_) && glob_ok(m->pod, id->pod) &&
	       glob_ok(m->container, id->container) && glob_ok(m->cgroup, cgroup);
}

int bw_select(const struct bw_k8s_id *id, const char *cgroup, const struct bw_selectors *s,
	      const char **profile)
{
	const char *best = NULL;
	size_t i;

	if (id->type && !strcmp(id->type, "sandbox"))
		return 0;
	if (id->profile && *id->profile) {
		*profile = id->profile;
		return 1;
	}
	for (i = 0; s && i < s->n; i++) {
		const struct bw_selector *m = &s->v[i];

		/* A line without keys would select everything: the parser refuses it. */
		if (!m->namespace_ && !m->pod && !m->container && !m->cgroup)
			continue;
		if (matches(m, id, cgroup) && (!best || strcmp(m->profile, best) < 0))
			best = m->profile;
	}
	if (!best)
		return 0;
	*profile = best;
	return 1;
}

bool bw_select_exempt(const struct bw_k8s_id *id, const struct bw_selectors *s, const char **why)
{
	if (id->namespace_ && !strcmp(id->namespace_, BW_EXEMPT_NAMESPACE)) {
		*why = "kube-system";
		return true;
	}
	if (s && s->agent_namespace && s->agent_pod_prefix && id->namespace_ && id->pod &&
	    !strcmp(id->namespace_, s->agent_namespace) &&
	    !strncmp(id->pod, s->agent_pod_prefix, strlen(s->agent_pod_prefix))) {
		*why = "the agent's own pod";
		return true;
	}
	return false;
}

/* The next word of *p (split at blanks), NUL-terminated in place; NULL at the end. */
static char *word(char **p)
{
	char *w = *p;

	while (*w == ' ' || *w == '\t')
		w++;
	if (!*w)
		return NULL;
	*p = w + strcspn(w, " \t");
	if (**p)
		*(*p)++ = '\0';
	return w;
}

static int parse_match(char *rest, struct bw_selector *m)
{
	char *w;

	m->profile = word(&rest);
	if (!m->profile)
		return -EINVAL;
	while ((w = word(&rest))) {
		char *eq = strchr(w, '=');
		const char **slot;

		if (!eq || !eq[1])
			return -EINVAL;
		*eq = '\0';
		if (!strcmp(w, "namespace"))
			slot = &m->namespace_;
		else if (!strcmp(w, "pod"))
			slot = &m->pod;
		else if (!strcmp(w, "container"))
			slot = &m->container;
		else if (!strcmp(w, "cgroup"))
			slot = &m->cgroup;
		else
			return -EINVAL;
		if (*slot)
			return -EINVAL;
		*slot = eq + 1;
	}
	return m->namespace_ || m->pod || m->container || m->cgroup ? 0 : -EINVAL;
}

int bw_selectors_parse(const char *text, struct bw_selectors *s, int *lineno)
{
	char *line, *next, *kw;
	size_t cap = 0;
	int n = 0;

	memset(s, 0, sizeof(*s));
	s->buf = strdup(text);
	if (!s->buf)
		return -ENOMEM;
	for (line = s->buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		n++;
		*lineno = n;
		kw = word(&line);
		if (!kw || kw[0] == '#')
			continue;
		if (!strcmp(kw, "agent")) {
			s->agent_namespace = word(&line);
			s->agent_pod_prefix = word(&line);
			if (!s->agent_pod_prefix || word(&line))
				goto bad;
			continue;
		}
		if (strcmp(kw, "match"))
			goto bad;
		if (s->n == cap) {
			struct bw_selector *v =
			    realloc(s->v, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!v) {
				bw_selectors_free(s);
				return -ENOMEM;
			}
			s->v = v;
		}
		memset(&s->v[s->n], 0, sizeof(s->v[0]));
		if (parse_match(line, &s->v[s->n]))
			goto bad;
		s->n++;
	}
	return 0;
bad:
	bw_selectors_free(s);
	return -EINVAL;
}

void bw_selectors_free(struct bw_selectors *s)
{
	free(s->v);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}
