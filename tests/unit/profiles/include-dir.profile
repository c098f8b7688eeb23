profile dir
# adir is a directory: adir.profile is the one read
include "adir"
