profile self
include "self-include.profile"
