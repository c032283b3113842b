int idlc_dummy_emit(void); int idlc_dummy_emit(void){return 0;}
