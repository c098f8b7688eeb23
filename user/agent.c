// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "guard.h"
#include "libdir.h"
#include "probe.h"
#include "util.h"

const char *bw_agent_no_lsm(void)
{
	const struct bw_support *sup = bw_probe();

	return bw_load_needs(true) & BW_NEED_LSM ? bw_lsm_unavailable(sup) : NULL;
}

int bw_agent_start(struct bw_maps *m, bool lsm)
{
	int ret = bw_load(m, lsm);

	if (ret)
		return ret;
	ret = bw_agent_register();
	if (ret)
		bw_err("cannot record this agent for self-protection: %s", strerror(-ret));
	return ret;
}

void bw_installed_init(struct bw_installed *in)
{
	memset(in, 0, sizeof(*in));
	in->slot.rb_fd = -1;
}

int bw_installed_compile(struct bw_installed *in, const char *path, const char *text, size_t len,
			 struct bw_diags *dg, char *err, size_t errlen)
{
	int ret;

	err[0] = '\0';
	ret = text ? bw_profile_parse_string(path, text, len, NULL, &in->profile, dg)
		   : bw_profile_load(path, bw_profile_libdir(), &in->profile, dg);
	if (ret)
		return ret;
	ret = bw_compile(in->profile, &in->compiled, err, errlen);
	/* -EINVAL is the parser's: a compile error says so in err. */
	return ret == -EINVAL ? -EOPNOTSUPP : ret;
}

int bw_installed_install(struct bw_installed *in, struct bw_maps *m,
			 const struct bw_pin_view *views, size_t nviews)
{
	int ret = bw_slot_install_views(m, &in->compiled, views, nviews, &in->slot);

	if (ret)
		return ret;
	in->installed = true;
	bw_slot_name_set(in->slot.id, in->profile->name, bw_profile_digest(in->profile));
	return 0;
}

int bw_installed_events(struct bw_installed *in)
{
	int ret = bw_events_open(&in->ev, in->slot.rb_fd);

	if (!ret)
		in->events_open = true;
	return ret;
}

void bw_installed_drain(struct bw_installed *in)
{
	if (!in->events_open)
		return;
	while (bw_events_poll(&in->ev, 0) > 0)
		;
	bw_events_check_lost(&in->ev);
}

int bw_installed_put(struct bw_installed *in, struct bw_maps *m)
{
	if (!in->installed)
		return 0;
	return bw_slot_put(m, in->slot.id);
}

void bw_installed_free(struct bw_installed *in)
{
	if (in->events_open)
		bw_events_close(&in->ev);
	in->events_open = false;
	if (in->slot.rb_fd >= 0)
		close(in->slot.rb_fd);
	in->slot.rb_fd = -1;
	bw_compiled_free(&in->compiled);
	bw_profile_free(in->profile);
	in->profile = NULL;
}
