SELECT 1 + 2 AS three, 'abc' AS s, DATE '2020-02-29' + 1 AS d
