SELECT sum(CASE WHEN l_linenumber = 1 THEN l_quantity * l_discount ELSE l_tax END) AS s FROM lineitem
