int idlc_dummy_output(void); int idlc_dummy_output(void){return 0;}
