-- GROUP BY a free-text store column whose strings are all distinct (s_name), read through a join: grouped by its row numbers
SELECT s_name, count(*) AS n, sum(l_quantity) AS q FROM supplier, lineitem WHERE s_suppkey = l_suppkey AND l_quantity < 3 GROUP BY s_name ORDER BY n DESC, s_name LIMIT 15
