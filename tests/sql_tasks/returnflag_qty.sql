-- returnflag_qty.sql: a SQL task for the tests (tests/cli/sql_task.sh):
-- lineitem grouped by its return flag, rows and quantity per flag.
SELECT l_returnflag, count(*) AS n, sum(l_quantity) AS qty
FROM lineitem
WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag
ORDER BY l_returnflag;
