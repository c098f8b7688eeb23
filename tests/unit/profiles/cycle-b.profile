allow file r /b
include "cycle-a"
