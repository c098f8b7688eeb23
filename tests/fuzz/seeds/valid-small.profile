profile small
default allow file
allow file r /**
