SELECT sum(l_extendedprice * l_discount) AS s FROM lineitem
