deny net connect tcp 10.0.0.0/8:*
