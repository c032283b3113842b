int idlc_dummy_sema(void); int idlc_dummy_sema(void){return 0;}
