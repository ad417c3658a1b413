SELECT concat(s_name, ' / ', s_phone) AS label FROM supplier WHERE s_suppkey < 10 ORDER BY label
