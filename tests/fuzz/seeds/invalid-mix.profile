mode learn
mode audit
default deny file
default allow file
foo
allow file x rel
allow file r /a/**/b trailing
allow file r /a/./b
allow net connect tcp 10.0.0.1/8:70000
allow net connect tcp ::1:80
allow net bind udp [fd00::]/8:1-0
allow net connect unix @
match pod=a pod=b x=y
allow file r "/unterminated
on-deny maybe
profile bad name
