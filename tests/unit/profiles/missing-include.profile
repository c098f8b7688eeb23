profile missing
# the next include exists nowhere
include "does/not/exist"
allow file r /x
