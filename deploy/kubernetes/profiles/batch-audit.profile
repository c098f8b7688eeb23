# batch-audit: every container named `job` of the namespaces ci-*, in audit
# mode: nothing is refused, what enforce mode would refuse is logged. Read
# the events, then turn the mode to enforce.
profile batch-audit
mode audit
match namespace=ci-* container=job
default allow file
default allow net
default deny exec
allow exec /bin/**
allow exec /usr/bin/**
allow exec /usr/local/bin/**
deny file rw /etc/shadow
deny file w /etc/**
