SELECT count(*) FROM supplier WHERE s_comment NOT LIKE '%Customer%'
