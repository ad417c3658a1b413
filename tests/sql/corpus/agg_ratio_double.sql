SELECT sum(l_extendedprice * l_discount) / sum(l_extendedprice) AS ratio FROM lineitem
