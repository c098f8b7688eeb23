# web: a web server pod. Everything but the secrets of the node and of the
# pod itself, which stay denied by any name (hard link, bind mount,
# /proc/PID/root). Select it from a pod with the annotation
#   bpfwarden.io/profile: web
profile web
mode enforce
default allow
deny file rw /etc/shadow
deny file rw /etc/gshadow
deny file rw /var/run/secrets/kubernetes.io/**
deny file rw /run/secrets/kubernetes.io/**
deny net connect tcp 169.254.169.254:*
