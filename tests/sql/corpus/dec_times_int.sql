SELECT sum(ps_supplycost * ps_availqty) AS v FROM partsupp
