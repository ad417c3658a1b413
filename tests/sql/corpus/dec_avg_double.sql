SELECT avg(l_extendedprice * (1 - l_discount)) AS a FROM lineitem
