SELECT l_shipmode, stddev_samp(l_quantity) AS sd, var_pop(l_extendedprice) AS vp, stddev_pop(l_discount) AS sp FROM lineitem GROUP BY l_shipmode ORDER BY l_shipmode
