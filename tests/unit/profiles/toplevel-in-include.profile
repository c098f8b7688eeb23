profile toplevel
include "inc/toplevel-keywords"
