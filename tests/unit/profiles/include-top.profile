# Top-level file of the include tests: rules come from three files.
profile include-top
include "inc/child"
allow file r /top
