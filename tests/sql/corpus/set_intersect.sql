SELECT o_custkey FROM orders WHERE o_orderpriority = '1-URGENT' INTERSECT SELECT c_custkey FROM customer WHERE c_mktsegment = 'BUILDING' ORDER BY 1
