-- ship_window.sql: a SQL task with declared parameters (tests/cli/sql_task.sh):
-- the lines of one return flag shipped in the 90 days from :ship_from with
-- at most :max_qty units, per line status.
-- dkb:param ship_from date 1993-01-01..1997-10-01 step month default 1994-01-01
-- dkb:param max_qty int 10..50 step 5 default 25
-- dkb:param flag choice 'A', 'N', 'R' default 'R'
SELECT l_linestatus, count(*) AS n, sum(l_extendedprice) AS price
FROM lineitem
WHERE l_shipdate >= DATE ':ship_from' AND l_shipdate < DATE ':ship_from' + 90
  AND l_quantity <= :max_qty AND l_returnflag = ':flag'
GROUP BY l_linestatus
ORDER BY l_linestatus;
