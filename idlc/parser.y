%{
int yylex(void); void yyerror(const char*);
%}
%token X
%%
s: X ;
%%
