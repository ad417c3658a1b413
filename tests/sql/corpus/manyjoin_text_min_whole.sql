SELECT s_name, min(c_phone) AS p, count(*) AS n FROM supplier JOIN customer ON s_nationkey = c_nationkey WHERE s_suppkey <= 20 GROUP BY s_name ORDER BY s_name
