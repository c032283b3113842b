int idlc_dummy_cpp(void); int idlc_dummy_cpp(void){return 0;}
