# fuzz library: found with the .profile suffix; included twice makes a diamond
allow file r /usr/lib/**
deny file rw /etc/shadow
allow exec /usr/bin/python3.11
