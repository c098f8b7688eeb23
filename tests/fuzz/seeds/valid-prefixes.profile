profile prefixes
default deny file
allow file rw /var/lib/app/app.pid*
allow file r /var/lib/app/**
allow exec /usr/lib/postgresql/15/bin/post*
allow file r /proc/self/**
deny file r /proc/self/environ
allow file r /\317*
