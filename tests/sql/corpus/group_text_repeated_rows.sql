-- GROUP BY a free-text store column with repeated strings (l_comment): the strings decide, not the row numbers
SELECT l_comment, count(*) AS n, min(l_orderkey) AS k FROM lineitem, orders WHERE l_orderkey = o_orderkey AND o_orderstatus = 'F' GROUP BY l_comment HAVING count(*) > 1 ORDER BY n DESC, l_comment LIMIT 20
