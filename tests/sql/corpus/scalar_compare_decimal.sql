SELECT count(*) FROM lineitem WHERE l_extendedprice > (SELECT 0.5 * max(l_extendedprice) FROM lineitem)
