allow file r /adir
