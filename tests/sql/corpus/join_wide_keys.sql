-- join_wide_keys.sql: a two-column join whose first key's values are near 2^62 but narrow (packed after a shift to their minimum; as they are they would not fit)
WITH l AS (SELECT l_orderkey + 4000000000000000000 AS k, l_linenumber AS n, l_quantity AS q FROM lineitem),
     o AS (SELECT o_orderkey + 4000000000000000000 AS k, (o_orderkey % 7) + 1 AS n FROM orders)
SELECT count(*) AS c, sum(q) AS q FROM l JOIN o ON l.k = o.k AND l.n = o.n
