SELECT sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS s FROM lineitem
