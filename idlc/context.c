int idlc_dummy_context(void); int idlc_dummy_context(void){return 0;}
