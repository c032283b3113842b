int idlc_dummy_layout(void); int idlc_dummy_layout(void){return 0;}
