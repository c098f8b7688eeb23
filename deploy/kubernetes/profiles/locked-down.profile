# locked-down: a busybox-style tool container that may read its image and
# write /tmp, run only its own binaries and reach nothing on the network.
profile locked-down
mode enforce
default deny
allow file r /
allow file r /bin/**
allow file r /lib/**
allow file r /usr/**
allow file r /etc/**
allow file r /proc/**
allow file rw /dev/null
allow file rw /tmp/**
deny file rw /etc/shadow
allow exec /bin/**
allow exec /usr/bin/**
