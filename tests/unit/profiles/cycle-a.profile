profile cycle
include "cycle-b"
