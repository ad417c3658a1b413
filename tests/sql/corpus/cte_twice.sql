WITH r AS (SELECT l_suppkey, sum(l_quantity) AS q FROM lineitem GROUP BY l_suppkey) SELECT l_suppkey, q FROM r WHERE q = (SELECT max(q) FROM r) ORDER BY l_suppkey
