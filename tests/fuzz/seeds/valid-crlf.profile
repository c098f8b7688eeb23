profile crlf
allow file r /etc/hosts
