SELECT sum(l_extendedprice + l_tax - l_discount) AS s FROM lineitem
