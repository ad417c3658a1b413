SELECT s_name, s_phone FROM supplier WHERE s_suppkey < 30 ORDER BY s_phone
