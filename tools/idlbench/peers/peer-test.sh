echo SKIP; exit 77
