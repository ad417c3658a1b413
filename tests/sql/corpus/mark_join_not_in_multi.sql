SELECT count(*) FROM partsupp WHERE ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%') AND ps_partkey NOT IN (SELECT p_partkey FROM part WHERE p_size = 1)
