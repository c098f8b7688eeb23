# left and right both include diamond/shared: it is read once
profile diamond
include "diamond/left"
include "diamond/right"
include "diamond/left"
