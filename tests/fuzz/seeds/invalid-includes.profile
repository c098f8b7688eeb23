profile p
include "loop"
include "bad"
include "missing"
