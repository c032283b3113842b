int idlc_dummy_types(void); int idlc_dummy_types(void){return 0;}
