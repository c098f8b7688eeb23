# only-in-lib exists only in the library; both exists here and there
profile libdir
include "abstractions/only-in-lib"
include "abstractions/both"
