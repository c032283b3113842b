int idlc_dummy_diag(void); int idlc_dummy_diag(void){return 0;}
